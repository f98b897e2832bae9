print("amber-sync: not built yet")
