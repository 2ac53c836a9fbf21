//! The package index as it was at an instant ([`DatedIndex`]): a server on loopback that pip
//! reads instead of the real index (`PIP_INDEX_URL`), answering each project's page with the
//! files the real index had received before the cutoff.
//!
//! It reads the real index's JSON pages (PEP 691), whose files carry their upload times
//! (PEP 700), and answers in the HTML form (PEP 503) that every pip reads, 9.0 (Python 3.5) as
//! well as today's: the interpreter-independent way to resolve as of a date (pip learnt
//! `--uploaded-prior-to` only in 26.0, which needs Python 3.9). Files are still downloaded
//! from where the real index says they are, and checked against its hashes by pip.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde::Deserialize;
use traparena_task::Cutoff;

use crate::error::PyEnvError;
use crate::steps::BuildOptions;

/// The index read when the build's environment names none (`PIP_INDEX_URL`).
pub const DEFAULT_UPSTREAM: &str = "https://pypi.org/simple/";
/// How long one request to the real index may take.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest project page read from the real index (numpy's is about 3 MB).
const MAX_PAGE: usize = 64 << 20;

/// A running index as of a cutoff, on `127.0.0.1`; it stops when dropped.
///
/// ```no_run
/// use traparena_pyenv::{DEFAULT_UPSTREAM, DatedIndex};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let index = DatedIndex::start("2024-08-13".parse()?, DEFAULT_UPSTREAM, None)?;
/// // pip install --index-url <index.url()> ... installs what PyPI held on 2024-08-13.
/// println!("{}", index.url());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DatedIndex {
    url: String,
    upstream: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for DatedIndex {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What serving needs: the cutoff, the real index, its client, the pages answered so far, and
/// the first pages it could not serve.
struct Shared {
    cutoff: Cutoff,
    upstream: reqwest::Url,
    client: reqwest::Client,
    pages: Mutex<HashMap<String, Page>>,
    problems: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("cutoff", &self.cutoff)
            .field("upstream", &self.upstream.as_str())
            .finish()
    }
}

/// Most problems kept (one per page the index could not serve).
const MAX_PROBLEMS: usize = 3;

/// A project page as answered: status and body.
#[derive(Clone)]
struct Page {
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
}

impl DatedIndex {
    /// Starts the index as of `cutoff` in front of `upstream` (a PEP 691 index's base URL, such
    /// as [`DEFAULT_UPSTREAM`]), reached through `proxy` when given (an `https_proxy` URL).
    pub fn start(
        cutoff: Cutoff,
        upstream: &str,
        proxy: Option<&str>,
    ) -> Result<DatedIndex, PyEnvError> {
        let refused = |reason: String| PyEnvError::DatedIndex {
            cutoff,
            upstream: upstream.to_owned(),
            reason: format!("cannot start: {reason}"),
            source: None,
        };
        let base = if upstream.ends_with('/') {
            upstream.to_owned()
        } else {
            format!("{upstream}/")
        };
        let upstream_url = reqwest::Url::parse(&base).map_err(|e| refused(e.to_string()))?;
        let client = client(proxy).map_err(refused)?;
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|e| refused(e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| refused(e.to_string()))?;
        let addr: SocketAddr = listener.local_addr().map_err(|e| refused(e.to_string()))?;
        let shared = Arc::new(Shared {
            cutoff,
            upstream: upstream_url,
            client,
            pages: Mutex::default(),
            problems: Mutex::default(),
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| refused(e.to_string()))?;
        let thread = std::thread::Builder::new()
            .name("tp-dated-index".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || runtime.block_on(serve(listener, shared, stop_rx))
            })
            .map_err(|e| refused(e.to_string()))?;
        Ok(DatedIndex {
            url: format!("http://{addr}/simple/"),
            upstream: base,
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The index's base URL (`http://127.0.0.1:PORT/simple/`), for pip's `--index-url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The index it reads.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// Why it could not serve pages so far (the first few: the real index unreachable, or
    /// without JSON pages or upload times); pip sees only a failed page.
    pub fn problems(&self) -> Vec<String> {
        self.shared.problems.lock().clone()
    }
}

/// `opts` for a build that resolves as of `cutoff`: pip's index (`PIP_INDEX_URL`) becomes a
/// [`DatedIndex`] in front of the one `opts` names (else [`DEFAULT_UPSTREAM`]), reached through
/// its `https_proxy`. The index must be kept while the build runs. A build without an index
/// (`PIP_NO_INDEX`) is left as it is.
pub(crate) fn dated_options(
    cutoff: Cutoff,
    opts: &BuildOptions,
) -> Result<(Option<DatedIndex>, BuildOptions), PyEnvError> {
    let var = |name: &str| {
        opts.env
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if var("PIP_NO_INDEX").is_some_and(|v| !matches!(v, "" | "0" | "false" | "no" | "off")) {
        return Ok((None, opts.clone()));
    }
    let upstream = var("PIP_INDEX_URL").unwrap_or(DEFAULT_UPSTREAM).to_owned();
    let index = DatedIndex::start(cutoff, &upstream, var("https_proxy"))?;
    let mut dated = opts.clone();
    dated.env.retain(|(k, _)| k != "PIP_INDEX_URL");
    dated
        .env
        .push(("PIP_INDEX_URL".into(), index.url().to_owned()));
    Ok((Some(index), dated))
}

/// The client of the real index: TLS through rustls with the platform's verifier, as the model
/// client's.
fn client(proxy: Option<&str>) -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let tls = rustls_platform_verifier::BuilderVerifierExt::with_platform_verifier(tls)
        .map_err(|e| e.to_string())?
        .with_no_client_auth();
    let builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(UPSTREAM_TIMEOUT)
        .user_agent(concat!("traparena-pyenv/", env!("CARGO_PKG_VERSION")));
    let builder = match proxy {
        Some(p) => builder.proxy(reqwest::Proxy::all(p).map_err(|e| e.to_string())?),
        None => builder.no_proxy(),
    };
    builder.build().map_err(|e| e.to_string())
}

async fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let stream = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let shared = Arc::clone(&shared);
        connections.spawn(async move {
            let service = service_fn(move |req| answer(req, Arc::clone(&shared)));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        while connections.try_join_next().is_some() {}
    }
    connections.abort_all();
}

async fn answer(
    req: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let project = (req.method() == Method::GET)
        .then(|| project_of(req.uri().path()))
        .flatten();
    let page = match project {
        None => text(
            StatusCode::NOT_FOUND,
            "this index serves GET /simple/<project>/ only",
        ),
        Some(p) => {
            let cached = shared.pages.lock().get(&p).cloned();
            match cached {
                Some(page) => page,
                None => {
                    let page = project_page(&shared, &p).await;
                    if page.status == StatusCode::BAD_GATEWAY {
                        let mut problems = shared.problems.lock();
                        if problems.len() < MAX_PROBLEMS {
                            problems.push(String::from_utf8_lossy(&page.body).trim().to_owned());
                        }
                    } else {
                        shared.pages.lock().insert(p, page.clone());
                    }
                    page
                }
            }
        }
    };
    let mut resp = Response::new(Full::new(page.body));
    *resp.status_mut() = page.status;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(page.content_type),
    );
    Ok(resp)
}

/// The normalised project name of `/simple/<project>/` (PEP 503), if the path is one.
fn project_of(path: &str) -> Option<String> {
    let name = path.strip_prefix("/simple/")?.trim_end_matches('/');
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| normalise_name(name))
}

/// A project's or distribution's name in PEP 503's normal form: lower case, runs of `-`, `_`
/// and `.` as one `-` (`Zope.Interface` → `zope-interface`), as indexes and pip compare them.
pub fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn text(status: StatusCode, body: &str) -> Page {
    Page {
        status,
        content_type: "text/plain; charset=utf-8",
        body: Bytes::from(format!("{body}\n")),
    }
}

/// A project's page of the real index (PEP 691).
#[derive(Deserialize)]
struct JsonPage {
    files: Vec<JsonFile>,
}

/// One file of a project's page.
#[derive(Deserialize)]
struct JsonFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: BTreeMap<String, String>,
    #[serde(default, rename = "requires-python")]
    requires_python: Option<String>,
    #[serde(default, rename = "upload-time")]
    upload_time: Option<String>,
    /// `false`, `true`, or the reason as a string.
    #[serde(default)]
    yanked: serde_json::Value,
}

/// The project's page as of the cutoff, or why the real index's could not be had (502; a
/// project the real index does not know is 404).
async fn project_page(shared: &Shared, project: &str) -> Page {
    let bad = |why: String| text(StatusCode::BAD_GATEWAY, &why);
    let Ok(url) = shared.upstream.join(&format!("{project}/")) else {
        return text(StatusCode::NOT_FOUND, "not a project name");
    };
    let resp = shared
        .client
        .get(url.clone())
        .header(
            reqwest::header::ACCEPT,
            "application/vnd.pypi.simple.v1+json",
        )
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => return bad(format!("{url}: {e}")),
    };
    if resp.status() == reqwest::StatusCode::NOT_FOUND {
        return text(StatusCode::NOT_FOUND, &format!("{url}: no such project"));
    }
    if !resp.status().is_success() {
        return bad(format!("{url}: the index answered {}", resp.status()));
    }
    let json = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if !json {
        return bad(format!(
            "{url}: the index does not serve PEP 691 JSON pages, whose upload times resolving \
             as of a date needs"
        ));
    }
    let body = match resp.bytes().await {
        Ok(b) if b.len() <= MAX_PAGE => b,
        Ok(b) => return bad(format!("{url}: a page of {} bytes", b.len())),
        Err(e) => return bad(format!("{url}: {e}")),
    };
    match serde_json::from_slice::<JsonPage>(&body) {
        Ok(page) => render(project, &url, &page, shared.cutoff),
        Err(e) => bad(format!("{url}: not a PEP 691 page: {e}")),
    }
}

/// The HTML page (PEP 503) of the files uploaded before `cutoff`; the real index's relative
/// links made absolute against `base`.
fn render(project: &str, base: &reqwest::Url, page: &JsonPage, cutoff: Cutoff) -> Page {
    let timed = page
        .files
        .iter()
        .filter(|f| f.upload_time.is_some())
        .count();
    if timed == 0 && !page.files.is_empty() {
        return text(
            StatusCode::BAD_GATEWAY,
            &format!("{base}: the index gives no upload times (PEP 700), so files cannot be dated"),
        );
    }
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">\
         <title>Links for {p}</title></head><body><h1>Links for {p}</h1>\n",
        p = escape(project)
    );
    for f in &page.files {
        if !f.upload_time.as_deref().is_some_and(|t| cutoff.admits(t)) {
            continue;
        }
        let Ok(mut url) = base.join(&f.url) else {
            continue;
        };
        if let Some((algo, digest)) = f
            .hashes
            .get_key_value("sha256")
            .or_else(|| f.hashes.iter().next())
        {
            url.set_fragment(Some(&format!("{algo}={digest}")));
        }
        html.push_str(&format!("<a href=\"{}\"", escape(url.as_str())));
        if let Some(rp) = &f.requires_python {
            html.push_str(&format!(" data-requires-python=\"{}\"", escape(rp)));
        }
        match &f.yanked {
            serde_json::Value::Bool(true) => html.push_str(" data-yanked=\"\""),
            serde_json::Value::String(why) => {
                html.push_str(&format!(" data-yanked=\"{}\"", escape(why)));
            }
            _ => {}
        }
        html.push_str(&format!(">{}</a><br/>\n", escape(&f.filename)));
    }
    html.push_str("</body></html>\n");
    Page {
        status: StatusCode::OK,
        content_type: "text/html; charset=utf-8",
        body: Bytes::from(html),
    }
}

/// `s` escaped for HTML text and double-quoted attributes.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_and_names() {
        assert_eq!(project_of("/simple/Flask/").as_deref(), Some("flask"));
        assert_eq!(
            project_of("/simple/zope.interface").as_deref(),
            Some("zope-interface")
        );
        assert_eq!(
            project_of("/simple/typing__Extensions/").as_deref(),
            Some("typing-extensions")
        );
        for bad in [
            "/",
            "/simple/",
            "/simple/../etc/",
            "/other/flask/",
            "/simple/a b/",
        ] {
            assert_eq!(project_of(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_files_before_the_cutoff_are_listed_with_their_attributes() {
        let page: JsonPage = serde_json::from_value(serde_json::json!({"files": [
            {"filename": "p-1.0.tar.gz", "url": "../../files/p-1.0.tar.gz",
             "hashes": {"sha256": "aa"}, "requires-python": ">=3.6, <4",
             "upload-time": "2020-01-01T00:00:00Z", "yanked": "broken \"build\""},
            {"filename": "p-2.0.tar.gz", "url": "https://files.example/p-2.0.tar.gz",
             "hashes": {"sha256": "bb"}, "upload-time": "2025-01-01T00:00:00Z", "yanked": false},
            {"filename": "p-0.9.tar.gz", "url": "https://files.example/p-0.9.tar.gz",
             "hashes": {}, "yanked": false}
        ]}))
        .unwrap();
        let base = reqwest::Url::parse("https://index.example/simple/p/").unwrap();
        let out = render("p", &base, &page, "2024-08-13".parse().unwrap());
        let html = String::from_utf8(out.body.to_vec()).unwrap();
        assert_eq!(out.status, StatusCode::OK);
        assert!(
            html.contains(
                "<a href=\"https://index.example/files/p-1.0.tar.gz#sha256=aa\" \
             data-requires-python=\"&gt;=3.6, &lt;4\" data-yanked=\"broken &quot;build&quot;\">\
             p-1.0.tar.gz</a>"
            ),
            "{html}"
        );
        assert!(!html.contains("p-2.0"), "{html}");
        // A file without an upload time cannot be dated, so it is left out.
        assert!(!html.contains("p-0.9"), "{html}");
    }

    #[test]
    fn an_index_without_upload_times_is_refused() {
        let page: JsonPage = serde_json::from_value(serde_json::json!({"files": [
            {"filename": "p-1.0.tar.gz", "url": "https://f/p-1.0.tar.gz"}
        ]}))
        .unwrap();
        let base = reqwest::Url::parse("https://index.example/simple/p/").unwrap();
        let out = render("p", &base, &page, "2024-08-13".parse().unwrap());
        assert_eq!(out.status, StatusCode::BAD_GATEWAY);
        assert!(String::from_utf8_lossy(&out.body).contains("no upload times"));
    }
}
