/**
 * Every sample of vegeta, k6, Locust, JMeter and ghz in ../shared/samples/loadtests against its
 * reference figures in expected.json: detected by content (no file name), then parsed from a
 * streamed file source and checked field by field.
 */
import { importersB } from '../../src/ingest/loadtest/group-b.ts';
import { describeExpectedSamples } from '../helpers/loadtest-expected.ts';

describeExpectedSamples('group-B samples against expected.json', {
  tools: ['vegeta', 'k6', 'locust', 'jmeter', 'ghz'],
  importers: importersB,
  fileCount: 132,
});
