"""`python -m loadmaster`: the same as the `loadmaster` command."""

from loadmaster.cli.main import main

if __name__ == "__main__":  # the decision worker process (spawn) may import the main module again
    main()
