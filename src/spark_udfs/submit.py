"""Entry point for ``spark-submit``: ``spark-submit [...] src/spark_udfs/submit.py evaluate --membership ...``.

It runs the ``assignors`` command line in the session spark-submit created.
"""

import sys

from assignors.cli import main

if __name__ == "__main__":
    sys.exit(main())
