"""A project at a revision, read once and typed (project.py), the read-only tree view it reads
(view.py), and where every file of a project lives (layout.py). Above formats/, below every room
that decides; pure: the store hands it a tree, it never opens one."""
