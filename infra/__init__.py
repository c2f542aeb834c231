"""Infrastructure of papersift: the CDK app and the one workflow definition it shares with the local runner."""
