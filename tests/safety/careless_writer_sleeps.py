"""`python -m careless_writer_sleeps`: never ends (the runner's timeout test)."""

import time

if __name__ == "__main__":
    time.sleep(600)
