"""./uet plugfest: submission packages of many labs, verified, kept in the run history, shown as a site."""
