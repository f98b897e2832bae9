print("cookies")
