// AuthCrypto module.
