// TrapArena's Node.js test runner shim: `node --require tp_node.js TEST_FILE`.
//
// Every `console.assert(value, ...)` the test file makes is one check: it passes when the value
// is truthy. `console.assert` itself only prints, so without this shim a failing assertion
// would still exit 0. The report (checks run, failed, the outcome of each, and where each failed
// check is) is written as one
// JSON object to the report descriptor the harness opened, and only once the test file has run
// to its end: output the code under test prints, an early `process.exit`, an uncaught exception
// or a crash therefore never produces a report.
'use strict';
const fs = require('fs');
const given = Number(process.env.TRAPARENA_REPORT_FD || '3');
delete process.env.TRAPARENA_REPORT_FD;
// The report goes through a descriptor of the shim's own: Node cannot duplicate one, so the
// harness's is reopened through /proc under a new number and the well-known one is closed, so
// that the code under test cannot write a report to it.
let fd = -1;
try {
  fd = fs.openSync(`/proc/self/fd/${given}`, 'w');
  fs.closeSync(given);
} catch (e) {
  fd = -1;
}
const util = require('util');
const outcomes = {};
// The failed checks, named and with where they are (at most MAX_LISTED, each message at most
// about MAX_MESSAGE characters).
const MAX_LISTED = 10;
const MAX_MESSAGE = 500;
const failures = [];
let run = 0;
let failed = 0;
const original = console.assert.bind(console);
console.assert = function (value, ...rest) {
  run += 1;
  const ok = Boolean(value);
  if (!ok) {
    failed += 1;
    // Where it failed, for whoever reads the output (not for the counts).
    const at = (new Error().stack || '').split('\n')[2] || '';
    original(false, `check ${run} failed${at ? ' ' + at.trim() : ''}`, ...rest);
    // The same, for the report: where the check is and what it said, bounded.
    if (failures.length < MAX_LISTED) {
      let said = '';
      try {
        said = rest.length ? util.format(...rest) : '';
      } catch (e) {
        said = '';
      }
      const where = at.trim().replace(/^at /, '');
      let message = `console.assert failed${where ? ' at ' + where : ''}${said ? ': ' + said : ''}`;
      if (Buffer.byteLength(message) > MAX_MESSAGE) {
        message = message.slice(0, MAX_MESSAGE - 3) + '...';
      }
      failures.push({ name: `check ${run}`, message });
    }
  }
  outcomes[`check ${run}`] = ok ? 'passed' : 'failed';
};
Object.defineProperty(console, 'assert', { writable: false, configurable: false });
process.once('beforeExit', () => {
  // Not emitted after process.exit() or an uncaught exception: only a run that reached its end.
  const report = JSON.stringify({
    runner: 'node', tests_run: run, failed, errored: 0, skipped: 0, outcomes, failures,
  });
  if (fd >= 0) {
    try {
      fs.writeSync(fd, report);
      fs.closeSync(fd);
    } catch (e) {
      // The descriptor is gone: nothing to tell.
    }
  }
  process.exitCode = failed === 0 && run > 0 ? 0 : 1;
});
