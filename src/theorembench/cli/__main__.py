from theorembench.cli.app import main

main()
