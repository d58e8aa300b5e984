"""The command-line face: parse arguments, call the pipeline, print. No rules live here."""
