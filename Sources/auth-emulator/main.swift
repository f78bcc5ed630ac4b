print("auth-emulator")
