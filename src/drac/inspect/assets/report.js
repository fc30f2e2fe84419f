// Index: sort a table by the clicked column (numbers numerically, text alphabetically).
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th.sortable").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute("aria-sort") !== "ascending";
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute("data-sort") || a.cells[column].textContent;
        var y = b.cells[column].getAttribute("data-sort") || b.cells[column].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return up ? order : -order;
      });
      table.querySelectorAll("th.sortable").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
// Document: pointing at a chunk or an element outlines everything of that chunk.
document.querySelectorAll("[data-chunk]").forEach(function (node) {
  var selector = '[data-chunk="' + node.getAttribute("data-chunk") + '"]';
  node.addEventListener("mouseenter", function () {
    document.querySelectorAll(selector).forEach(function (n) { n.classList.add("hl"); });
  });
  node.addEventListener("mouseleave", function () {
    document.querySelectorAll(selector).forEach(function (n) { n.classList.remove("hl"); });
  });
});
