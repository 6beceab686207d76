-- Three more artifact kinds: Go execution traces, GODEBUG=schedtrace logs and runtime-metric series.
ALTER TABLE artifacts DROP CONSTRAINT artifacts_kind_check;
ALTER TABLE artifacts ADD CONSTRAINT artifacts_kind_check
  CHECK (kind IN ('profile', 'loadtest', 'benchmark', 'gctrace', 'trace', 'schedtrace', 'metrics'));
