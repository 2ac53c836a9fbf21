"""Pagination helpers for list views."""


def page_count(total, per_page):
    """Number of pages needed to show `total` items, `per_page` at a time."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    if total < 0:
        raise ValueError("total must not be negative")
    return total // per_page + 1


def page_slice(items, page, per_page):
    """The items shown on 1-based `page`."""
    if page < 1:
        raise ValueError("pages start at 1")
    start = (page - 1) * per_page
    return items[start:start + per_page]


def page_label(page, total, per_page):
    """Footer text such as "Page 2 of 3", or "No results" for an empty list."""
    pages = page_count(total, per_page)
    if pages == 0:
        return "No results"
    return f"Page {page} of {pages}"
