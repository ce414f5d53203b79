import sys

from oasis.cli import main

sys.exit(main())
