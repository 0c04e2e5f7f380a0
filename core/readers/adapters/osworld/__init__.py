"""OSWorld result directories: ``reader`` (the reader), ``actions`` (pyautogui code and ``computer_13`` actions)."""
