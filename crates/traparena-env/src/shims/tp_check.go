// TrapArena's Go check library, built by tp_build.sh with HumanEvalFix test programs.
// The test function takes a *tpT, testify's assert works on it (it is an assert.TestingT),
// and `tpCheck(t, n, func() { assert.Equal(...) })` is check n of the test: it fails when an
// assertion in it fails, errs when it panics. `tpFinish()`, the last statement of `main`,
// writes the report (checks run, failed, errored, the outcome of each, and each failed check's
// line and assertion message) to the report
// descriptor, duplicated under a number of the library's own at start-up and closed under its
// well-known one: output the code under test prints, an early `os.Exit`, or a panic outside a
// check never produce a report.
//
// Import probe mode (TRAPARENA_PROBE_FROM=k): checks before index k are passed over, every
// other check writes one JSON line {"case": i, "ok": ..., "why": ...} (0-based) as soon as it
// ends, and a check still running after TRAPARENA_PROBE_TIMEOUT_MS ends the program.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type tpT struct {
	failed bool
	// The first failed assertion's message of the running check.
	said string
}

// Errorf records a failed assertion of the running check (assert.TestingT).
func (t *tpT) Errorf(format string, args ...interface{}) {
	if !t.failed {
		// testify's message begins with a trace of build paths; what failed starts at "Error:".
		t.said = fmt.Sprintf(format, args...)
		if i := strings.Index(t.said, "Error:"); i >= 0 {
			t.said = t.said[i:]
		}
	}
	t.failed = true
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// At most this many failed checks are described in the report, each in at most this many bytes.
const tpMaxListed = 10
const tpMaxMessage = 500

// Per failed check: where it is and what happened.
var tpWhy = map[int]string{}

// Helper is testing.T's, for testify's tHelper.
func (t *tpT) Helper() {}

var tpOutcome = map[int]int{}
var tpProbe bool
var tpFrom int
var tpTimeout time.Duration

// A package variable of the file that sorts first: initialised before any of the program's.
var tpReport = tpStart()

func tpStart() *os.File {
	if f, ok := os.LookupEnv("TRAPARENA_PROBE_FROM"); ok {
		tpProbe = true
		tpFrom, _ = strconv.Atoi(f)
		ms, _ := strconv.Atoi(os.Getenv("TRAPARENA_PROBE_TIMEOUT_MS"))
		tpTimeout = time.Duration(ms) * time.Millisecond
	}
	given, err := strconv.Atoi(os.Getenv("TRAPARENA_REPORT_FD"))
	if err != nil {
		given = 3
	}
	os.Unsetenv("TRAPARENA_REPORT_FD")
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(given), syscall.F_DUPFD_CLOEXEC, 64)
	if errno != 0 {
		return nil
	}
	syscall.Close(given)
	return os.NewFile(fd, "report")
}

func tpWrite(s string) {
	if tpReport != nil {
		tpReport.WriteString(s)
	}
}

func tpEvaluate(t *tpT, f func()) (result int, why string) {
	defer func() {
		if r := recover(); r != nil {
			result, why = 2, fmt.Sprintf("panics: %v", r)
			fmt.Fprintln(os.Stderr, why)
		}
	}()
	t.failed = false
	t.said = ""
	f()
	if t.failed {
		return 1, "the assertion fails"
	}
	return 0, ""
}

func tpCheck(t *tpT, n int, f func()) {
	i := n - 1
	var result int
	var why string
	if tpProbe {
		if i < tpFrom {
			return
		}
		done := make(chan struct{})
		go func() {
			result, why = tpEvaluate(t, f)
			close(done)
		}()
		var limit <-chan time.Time
		if tpTimeout > 0 {
			limit = time.After(tpTimeout)
		}
		select {
		case <-done:
		case <-limit:
			tpWrite(fmt.Sprintf("{\"case\": %d, \"ok\": false, \"why\": \"timed out\"}\n", i))
			os.Exit(0)
		}
		tpWrite(fmt.Sprintf("{\"case\": %d, \"ok\": %t, \"why\": %q}\n", i, result == 0, why))
	} else {
		result, why = tpEvaluate(t, f)
	}
	if result != 0 {
		fmt.Fprintf(os.Stderr, "check %d: %s\n", n, why)
	}
	if _, seen := tpWhy[n]; result != 0 && !seen {
		m := why
		if result == 1 && t.said != "" {
			m = t.said
		}
		if _, file, line, ok := runtime.Caller(1); ok {
			for i := len(file) - 1; i >= 0; i-- {
				if file[i] == '/' {
					file = file[i+1:]
					break
				}
			}
			m = fmt.Sprintf("%s:%d: %s", file, line, m)
		}
		if len(m) > tpMaxMessage {
			m = m[:tpMaxMessage-3] + "..."
		}
		tpWhy[n] = m
	}
	if old, ok := tpOutcome[n]; !ok || old < result {
		tpOutcome[n] = result
	}
}

func tpFinish() {
	os.Stdout.Sync()
	keys := make([]int, 0, len(tpOutcome))
	for n := range tpOutcome {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	failed, errored := 0, 0
	outcomes := ""
	for _, n := range keys {
		r := tpOutcome[n]
		name := "passed"
		if r == 1 {
			failed++
			name = "failed"
		} else if r == 2 {
			errored++
			name = "error"
		}
		if outcomes != "" {
			outcomes += ", "
		}
		outcomes += fmt.Sprintf("\"check %d\": %q", n, name)
	}
	type failure struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	failures := []failure{}
	for _, n := range keys {
		if tpOutcome[n] != 0 && len(failures) < tpMaxListed {
			failures = append(failures, failure{fmt.Sprintf("check %d", n), tpWhy[n]})
		}
	}
	listed, _ := json.Marshal(failures)
	if !tpProbe {
		tpWrite(fmt.Sprintf("{\"runner\": \"go\", \"tests_run\": %d, \"failed\": %d, \"errored\": %d, \"skipped\": 0, \"outcomes\": {%s}, \"failures\": %s}", len(keys), failed, errored, outcomes, listed))
	}
	if failed == 0 && errored == 0 && len(keys) > 0 {
		os.Exit(0)
	}
	os.Exit(1)
}
