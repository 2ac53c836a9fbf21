// TrapArena's Java check library, compiled by tp_build.sh with HumanEvalFix test programs.
// `TpCheck.check(n, () -> expr)` is check n of the test: it passes when `expr` is true, fails
// when it is false, errs when it throws. `TpCheck.finish()`, the last statement of the test's
// `main`, writes the report (checks run, failed, errored, the outcome of each, and where each
// failed check is in the test's source) to the
// report descriptor, which it reopens under a number of its own: output the code under test
// prints, an early `System.exit`, or an uncaught exception never produce a report.
//
// Import probe mode (TRAPARENA_PROBE_FROM=k): checks before index k are passed over, every
// other check writes one JSON line `{"case": i, "ok": ..., "why": ...}` (0-based) as soon as it
// ends, and a check still running after TRAPARENA_PROBE_TIMEOUT_MS ends the program.

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.TreeMap;

public final class TpCheck {
    /** One check: true when it holds. */
    public interface Check {
        /** Evaluates the check. */
        boolean holds() throws Exception;
    }

    private static final TreeMap<Integer, Integer> OUTCOME = new TreeMap<>();
    /** Per failed check: where it is and what happened. */
    private static final TreeMap<Integer, String> WHY = new TreeMap<>();
    /** At most this many failed checks are described in the report, each in at most this many characters. */
    private static final int MAX_LISTED = 10;
    private static final int MAX_MESSAGE = 500;
    private static final FileOutputStream REPORT = open();
    private static final String FROM = System.getenv("TRAPARENA_PROBE_FROM");
    private static final boolean PROBE = FROM != null;

    private TpCheck() {}

    private static FileOutputStream open() {
        String given = System.getenv("TRAPARENA_REPORT_FD");
        int fd = given == null ? 3 : Integer.parseInt(given);
        FileOutputStream mine;
        try {
            // Reopened under a number of the JVM's choosing...
            mine = new FileOutputStream("/proc/self/fd/" + fd);
        } catch (IOException e) {
            return null;
        }
        try {
            // ... and closed under the well-known one (java.io is opened to this class by the
            // launch's --add-opens).
            FileDescriptor d = new FileDescriptor();
            Field f = FileDescriptor.class.getDeclaredField("fd");
            f.setAccessible(true);
            f.setInt(d, fd);
            new FileOutputStream(d).close();
        } catch (ReflectiveOperationException | IOException | RuntimeException e) {
            // Left open: the report still goes through the library's own descriptor.
        }
        return mine;
    }

    /** Opens the report before the test's code runs (the launcher calls it first). */
    public static void start() {
        // Class initialisation did the work.
    }

    private static void write(String s) {
        if (REPORT == null) {
            return;
        }
        try {
            REPORT.write(s.getBytes(StandardCharsets.UTF_8));
            REPORT.flush();
        } catch (IOException e) {
            // The descriptor is gone: nothing to tell.
        }
    }

    private static String probeLine(int i, boolean ok, String why) {
        return "{\"case\": " + i + ", \"ok\": " + ok + ", \"why\": \"" + why + "\"}\n";
    }

    private static int evaluate(Check c, String[] why) {
        try {
            if (c.holds()) {
                return 0;
            }
            why[0] = "the assertion fails";
            return 1;
        } catch (Throwable t) {
            why[0] = "raises " + t.getClass().getSimpleName();
            String said = t.getMessage();
            if (said != null && !said.isEmpty()) {
                why[1] = why[0] + ": " + said;
            }
            return 2;
        }
    }

    /** Runs check `n` (1-based). */
    public static void check(int n, Check c) {
        int i = n - 1;
        String[] why = {"", null};
        int result;
        if (PROBE) {
            if (i < Integer.parseInt(FROM)) {
                return;
            }
            long ms = Long.parseLong(System.getenv().getOrDefault("TRAPARENA_PROBE_TIMEOUT_MS", "0"));
            int[] r = {-1};
            Thread t = new Thread(null, () -> r[0] = evaluate(c, why), "check", 64L << 20);
            t.setDaemon(true);
            t.start();
            try {
                t.join(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                write(probeLine(i, false, "timed out"));
                Runtime.getRuntime().halt(0);
            }
            result = r[0];
            write(probeLine(i, result == 0, why[0]));
        } else {
            result = evaluate(c, why);
        }
        if (result != 0) {
            System.err.println("check " + n + " " + (result == 1 ? "failed" : why[0]));
        }
        if (result != 0 && !WHY.containsKey(n)) {
            WHY.put(n, describe(why[1] != null ? why[1] : why[0]));
        }
        OUTCOME.merge(n, result, Math::max);
    }

    /** Where the check called from the test's code is, and `what`, bounded. */
    private static String describe(String what) {
        String where = "";
        for (StackTraceElement e : new Throwable().getStackTrace()) {
            if (!e.getClassName().equals("TpCheck")) {
                where = e.getFileName() + ":" + e.getLineNumber() + ": ";
                break;
            }
        }
        String m = where + what;
        return m.length() > MAX_MESSAGE ? m.substring(0, MAX_MESSAGE - 3) + "..." : m;
    }

    /** `s` as the contents of a JSON string. */
    private static String json(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || Character.isSurrogate(c)) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** Writes the report and ends the program: status 0 when every check passed. */
    public static void finish() {
        System.out.flush();
        System.err.flush();
        int failed = 0;
        int errored = 0;
        StringBuilder outcomes = new StringBuilder();
        for (var e : OUTCOME.entrySet()) {
            int r = e.getValue();
            failed += r == 1 ? 1 : 0;
            errored += r == 2 ? 1 : 0;
            if (outcomes.length() > 0) {
                outcomes.append(", ");
            }
            outcomes.append("\"check ").append(e.getKey()).append("\": \"")
                    .append(r == 0 ? "passed" : r == 1 ? "failed" : "error").append('"');
        }
        int run = OUTCOME.size();
        StringBuilder failures = new StringBuilder();
        int listed = 0;
        for (var e : WHY.entrySet()) {
            if (listed == MAX_LISTED) {
                break;
            }
            listed++;
            if (failures.length() > 0) {
                failures.append(", ");
            }
            failures.append("{\"name\": \"check ").append(e.getKey()).append("\", \"message\": \"")
                    .append(json(e.getValue())).append("\"}");
        }
        if (!PROBE) {
            write("{\"runner\": \"java\", \"tests_run\": " + run + ", \"failed\": " + failed
                    + ", \"errored\": " + errored + ", \"skipped\": 0, \"outcomes\": {" + outcomes
                    + "}, \"failures\": [" + failures + "]}");
        }
        Runtime.getRuntime().halt(failed == 0 && errored == 0 && run > 0 ? 0 : 1);
    }
}

/** Runs `Main.main` after the check library opened its report: no code of the test runs first. */
final class TpLaunch {
    private TpLaunch() {}

    public static void main(String[] args) throws Throwable {
        TpCheck.start();
        try {
            Class.forName("Main").getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
