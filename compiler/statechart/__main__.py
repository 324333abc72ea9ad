import sys

from statechart.cli import main

sys.exit(main())
