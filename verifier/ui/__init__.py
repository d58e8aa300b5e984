"""The UI (design §10, §14; docs/ui.md): a read-only projection of a project's repository, ledger
and scores as HTML pages, served by `rw serve` under `/` or written as a static site with
`rw ui build`. It never writes a project and never calls a model."""
