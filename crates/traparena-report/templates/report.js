(function () {
  function key(row, i) {
    var c = row.cells[i];
    if (!c) return null;
    if (c.hasAttribute('data-sort')) {
      var s = c.getAttribute('data-sort');
      return s === '' ? null : parseFloat(s);
    }
    return c.textContent.trim();
  }
  function compare(a, b) {
    if (a === null && b === null) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }
  function sortBy(table, th, i) {
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var a = key(x, i), b = key(y, i);
      if (a === null || b === null) return compare(a, b);
      return asc ? compare(a, b) : compare(b, a);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, i) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortBy(table, th, i); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(table, th, i); }
      });
    });
  });
})();
