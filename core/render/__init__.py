"""Pages for people: the HTML report, its pair pages and geometry, and the gate's report."""
