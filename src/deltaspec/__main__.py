import sys

from deltaspec.cli import main

sys.exit(main())
