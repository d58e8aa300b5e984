"""ResearchWiki verifier: the frozen evaluator that is the only writer of a project repository."""

VERSION = "0.1.0"
