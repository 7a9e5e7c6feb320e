import sys

from splitkv.cli import main

sys.exit(main())
