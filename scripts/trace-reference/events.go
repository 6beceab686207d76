package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/exp/trace"
)

// dumpEvents writes one line per event, in the order the reader yields them: the event's kind,
// time and context, then what the analyses read from it. The trace analysis in stagediff prints
// the same lines for the same file (its tests compare them), which pins down the event order.
func dumpEvents(r io.Reader, w io.Writer) error {
	tr, err := trace.NewReader(r)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(w)
	defer out.Flush()
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %d g=%d p=%d m=%d", ev.Kind(), ev.Time(), ev.Goroutine(), ev.Proc(), ev.Thread())
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			switch st.Resource.Kind {
			case trace.ResourceGoroutine:
				from, to := st.Goroutine()
				fmt.Fprintf(out, " G%d %s->%s %q stack=%d", st.Resource.Goroutine(), from, to, st.Reason, stackLen(st.Stack))
			case trace.ResourceProc:
				from, to := st.Proc()
				fmt.Fprintf(out, " P%d %s->%s", st.Resource.Proc(), from, to)
			}
		case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
			rg := ev.Range()
			fmt.Fprintf(out, " %q %s", rg.Name, rg.Scope)
		case trace.EventMetric:
			m := ev.Metric()
			fmt.Fprintf(out, " %s=%d", m.Name, m.Value.Uint64())
		}
		fmt.Fprintf(out, " estack=%d\n", stackLen(ev.Stack()))
	}
}

func stackLen(s trace.Stack) int {
	n := 0
	for range s.Frames() {
		n++
	}
	return n
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: trace-reference events|summary|regions TRACE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	switch os.Args[1] {
	case "events":
		err = dumpEvents(br, os.Stdout)
	case "summary":
		var head []byte
		if head, err = br.Peek(16); err != nil {
			break
		}
		var minor int
		if _, err = fmt.Sscanf(string(head), "go 1.%d trace", &minor); err != nil {
			break
		}
		var sum *summaryJSON
		if sum, err = summarize(br, fmt.Sprintf("1.%d", minor)); err != nil {
			break
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(sum)
	case "regions":
		var out *regionsJSON
		if out, err = summarizeRegions(br); err != nil {
			break
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-reference:", err)
		os.Exit(1)
	}
}
