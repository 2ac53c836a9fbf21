//! The report as one self-contained HTML page, rendered from the askama templates in
//! `templates/` (HTML escaping by default): inline CSS, a few lines of inline JavaScript that
//! sort a table when its header is clicked, and charts as inline SVG. No external assets.

use askama::Template;

use crate::charts::Chart;
use crate::error::ReportError;
use crate::model::Report;
use crate::view::{Block, Page, page};

#[derive(Template)]
#[template(path = "report.html", whitespace = "minimize")]
struct ReportPage<'a> {
    page: &'a Page,
}

/// Renders the report as one self-contained HTML page.
pub(crate) fn render(r: &Report, viewer: Option<&str>) -> Result<String, ReportError> {
    let page = page(r, viewer);
    ReportPage { page: &page }
        .render()
        .map_err(ReportError::Render)
}
