"""`python -m loadmaster`: the same as the `loadmaster` command."""

from loadmaster.cli.main import main

main()
