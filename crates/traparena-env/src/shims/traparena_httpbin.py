"""A local httpbin on loopback for test suites that read HTTPBIN_URL (psf/requests before its
suite took pytest-httpbin's fixture): loaded with `-p traparena_httpbin`, it starts httpbin in a
thread of the test process, from the environment's `httpbin` and `pytest-httpbin` packages, and
sets HTTPBIN_URL before the test modules are imported, so that the tests run offline. A run that
sets HTTPBIN_URL itself, whose environment lacks either package, or whose sandbox forbids
listening on a port (the builtin backend's Landlock rules), is left as it is."""
import os


def pytest_configure(config):
    if os.environ.get("HTTPBIN_URL"):
        return
    try:
        import httpbin
        from pytest_httpbin import serve
    except ImportError:
        return
    try:
        server = serve.Server(application=httpbin.app)
    except OSError:
        return
    server.start()
    config._traparena_httpbin = server
    os.environ["HTTPBIN_URL"] = server.url + "/"


def pytest_unconfigure(config):
    server = getattr(config, "_traparena_httpbin", None)
    if server is not None:
        server.stop()
