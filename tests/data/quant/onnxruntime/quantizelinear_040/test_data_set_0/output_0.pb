J
w#vWñáèsm