from gpuctl.cli.main import main

main()
