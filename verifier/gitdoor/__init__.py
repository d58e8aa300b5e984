"""Git's door into a project: the hooks every bare repository carries, and what they run."""
