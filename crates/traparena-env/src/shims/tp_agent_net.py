"""The sandbox side of an agent process's network bridge (TrapArena harness helper).

Usage: python3 -I -S tp_agent_net.py PORT SOCKET -- ARGV...

Brings the loopback interface up when it is down (the builtin backend's fresh network
namespace; the process is root in its user namespace there), listens on 127.0.0.1:PORT and
forwards every connection to the Unix socket SOCKET, whose other end the harness forwards to
the model proxy at the host's 127.0.0.1:PORT. Then it runs ARGV as its child and exits as the
child does (128 + the signal when a signal ended it). It stays ARGV's parent, so ARGV never
finds it among its own children, and it reaps whatever is left to it; when it exits, the
sandbox's process namespace ends and takes every other process of the agent with it.
"""

import fcntl
import os
import signal
import socket
import struct
import sys
import threading
import time

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sh22x"


def say(text):
    print("traparena bridge: " + text, file=sys.stderr, flush=True)


def loopback_up():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack(IFREQ, b"lo", 0)
        flags = struct.unpack(IFREQ, fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        if not flags & IFF_UP:
            fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags | IFF_UP))


def pump(src, dst):
    """Copies src to dst until src ends, then ends dst's direction."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay(conn, path):
    with conn, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as up:
        try:
            up.connect(path)
        except OSError as e:
            say("cannot reach the model proxy: %s" % e)
            return
        back = threading.Thread(target=pump, args=(up, conn), daemon=True)
        back.start()
        pump(conn, up)
        back.join()


def serve(listener, path):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError as e:
            say("accept: %s" % e)
            time.sleep(0.1)
            continue
        try:
            threading.Thread(target=relay, args=(conn, path), daemon=True).start()
        except RuntimeError as e:  # no thread to be had: that connection is refused
            say("relay: %s" % e)
            conn.close()


def main():
    args = sys.argv[1:]
    if len(args) < 4 or args[2] != "--":
        say("usage: tp_agent_net.py PORT SOCKET -- ARGV...")
        return 125
    port, path, argv = int(args[0]), args[1], args[3:]
    try:
        loopback_up()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError as e:
        say("cannot listen on 127.0.0.1:%d: %s" % (port, e))
        return 125
    child = os.fork()
    if child == 0:
        listener.close()
        # Python ignores these; the agent gets the dispositions it would have had.
        for name in ("SIGPIPE", "SIGXFSZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            print("%s: %s" % (argv[0], e), file=sys.stderr, flush=True)
        os._exit(127)
    os.close(0)
    os.dup2(os.open(os.devnull, os.O_RDWR), 1)
    threading.stack_size(256 * 1024)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 125
        if pid == child:
            break
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main())
