from wordjudge.cli.main import main

main()
