"""Commons: identity, the leaf task board, message threads and inboxes (design §10, component 4).

`adapter.Commons` is the one interface the verifier talks to; `local.LocalCommons` implements it
on an embedded SQLite database so the service runs alone. `notifier` turns what landed in a
project (ledger rows and the commits beside them) into the messages of design §6 and §9.
"""
