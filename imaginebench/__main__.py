from imaginebench.commands.main import main

main()
