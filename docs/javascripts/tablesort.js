// Sortable generated tables (mkdocs-material's documented tablesort integration; tablesort 5.6.0
// is vendored under vendor/ so the site stays offline). Numeric columns sort by the cell's
// data-sort value (base units), written by generators/site/publish.py.
document$.subscribe(function () {
  var tables = document.querySelectorAll("article .ps-table table");
  tables.forEach(function (table) {
    new Tablesort(table);
  });
});
