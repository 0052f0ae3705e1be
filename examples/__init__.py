"""Sample agent configs; shipped inside the package as `gitgauge.examples`."""
