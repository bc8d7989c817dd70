from generators.cli import main

if __name__ == "__main__":  # not in a worker process that imports this module (multiprocessing's spawn)
    raise SystemExit(main())
