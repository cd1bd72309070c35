"""Entry point for ``spark-submit``: ``spark-submit [...] src/spark_udfs/submit.py evaluate --membership ...``.

It runs the ``assignors`` command line, with the Spark commands, in the session spark-submit created.
"""

import sys

from spark_udfs.cli import main

if __name__ == "__main__":
    sys.exit(main())
