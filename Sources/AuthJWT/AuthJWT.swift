// AuthJWT module.
