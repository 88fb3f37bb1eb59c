"""One module per ``kcodec`` subcommand; see :mod:`kcodec.cli`."""
