"""Readouts where reviews happen: the pull-request summary, the JUnit report of the gate and
the published static site (`langchef summary`, `gate --junit`, `publish`)."""
