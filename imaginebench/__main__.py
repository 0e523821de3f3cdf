from imaginebench.cli import main

main()
