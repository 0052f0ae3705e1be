"""Files `gitgauge init` lays down; shipped inside the package as `gitgauge.template`."""
