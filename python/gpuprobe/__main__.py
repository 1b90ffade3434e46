"""`python -m gpuprobe run [-o PATH] [-c CONFIG] [--] CMD ARGS...` (see gpuprobe.run), and
`python -m gpuprobe COMMAND ...` for the gpuprobe command's others (capture, report, info ...)."""
import sys

from gpuprobe.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
