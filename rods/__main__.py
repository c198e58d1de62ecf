import sys

from rods.cli import main

sys.exit(main())
