"""One experiment read out: its evidence assembled into the readout document, and that
document published as a version under reports/."""
