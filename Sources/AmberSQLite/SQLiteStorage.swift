import Amber
