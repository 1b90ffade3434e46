"""`python -m gpuprobe run [-o PATH] [-c CONFIG] [--] CMD ARGS...`: see gpuprobe.run."""
import sys

from gpuprobe.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
