import sys

from assignors.cli import main

sys.exit(main())
